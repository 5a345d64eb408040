from inventory_v2 import *
