"""The standard's constants."""

import math

e = math.e
inf = math.inf
nan = math.nan
newaxis = None
pi = math.pi
