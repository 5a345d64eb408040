import os

BASE_DIR = os.path.abspath(os.path.dirname(__file__))
