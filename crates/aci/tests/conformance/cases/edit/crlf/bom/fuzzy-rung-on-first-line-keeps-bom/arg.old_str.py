import os  

BASE_DIR = os.path.dirname(__file__)  
