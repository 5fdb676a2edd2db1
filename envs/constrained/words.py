"""The concepts of `--env constrained:N`: everyday nouns and verbs, written for this package
(CommonGen's own concept sets are not available offline). A verb's inflections are made by rule,
with the irregular ones listed.
"""

_NOUNS = """
apple bag ball bank basket bed bell bench bicycle bird blanket boat book bottle bowl box bread
bridge brush bucket bus cake camera candle car card carpet cat chair cheese child clock cloud
coat coffee computer cookie cow cup curtain desk dog door dress drum duck egg engine farm fence
field fish flag floor flower forest fork fountain garden gate gift glass glove goat guitar
hammer hat hill horse house ice island jacket key kitchen knife ladder lake lamp leaf letter
library lion map market mirror moon mountain mouse museum nest newspaper ocean orange painting
pan paper park pen pencil piano picture pillow plate pocket pond potato rain river road roof
rope sand school sea seed sheep shelf ship shirt shoe shop sky snow sock sofa soup spoon stage
star station stone street sun table teacher tent tiger tomato tower towel toy track train tree
truck umbrella valley vase village violin wall wallet watch water wave wheel window wolf wood
"""
_VERBS = """
bake bark bounce build buy carry catch chase clean climb cook cross cut dance dig draw drink
drive drop eat fall feed fill find fix float fly fold follow grow hang hide hit hold hug jump
kick kneel knit laugh lean lift listen look melt mix open paint pick plant play pour pull push
read ride ring roll run sail sew shake shine sing sit skate sleep slide smile sniff splash
spread stand stir sweep swim swing talk taste teach throw tie wash watch water wave whistle
write
"""
NOUNS = frozenset(_NOUNS.split())
VERBS = frozenset(_VERBS.split())

IRREGULAR_PAST = {  # verb: (past, past participle)
    "build": ("built", "built"),
    "buy": ("bought", "bought"),
    "catch": ("caught", "caught"),
    "cut": ("cut", "cut"),
    "dig": ("dug", "dug"),
    "draw": ("drew", "drawn"),
    "drink": ("drank", "drunk"),
    "drive": ("drove", "driven"),
    "eat": ("ate", "eaten"),
    "fall": ("fell", "fallen"),
    "feed": ("fed", "fed"),
    "find": ("found", "found"),
    "fly": ("flew", "flown"),
    "grow": ("grew", "grown"),
    "hang": ("hung", "hung"),
    "hide": ("hid", "hidden"),
    "hit": ("hit", "hit"),
    "hold": ("held", "held"),
    "kneel": ("knelt", "knelt"),
    "lean": ("leant", "leant"),
    "read": ("read", "read"),
    "ride": ("rode", "ridden"),
    "ring": ("rang", "rung"),
    "run": ("ran", "run"),
    "shake": ("shook", "shaken"),
    "shine": ("shone", "shone"),
    "sing": ("sang", "sung"),
    "sit": ("sat", "sat"),
    "sleep": ("slept", "slept"),
    "slide": ("slid", "slid"),
    "spread": ("spread", "spread"),
    "stand": ("stood", "stood"),
    "swim": ("swam", "swum"),
    "swing": ("swung", "swung"),
    "teach": ("taught", "taught"),
    "throw": ("threw", "thrown"),
    "write": ("wrote", "written"),
    "sew": ("sewed", "sewn"),
    "sweep": ("swept", "swept"),
}

IRREGULAR_PLURAL = {
    "child": "children",
    "fish": "fish",
    "foot": "feet",
    "knife": "knives",
    "leaf": "leaves",
    "mouse": "mice",
    "sheep": "sheep",
    "shelf": "shelves",
    "wolf": "wolves",
    "potato": "potatoes",
    "tomato": "tomatoes",
}
