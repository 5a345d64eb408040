import logging
import math
