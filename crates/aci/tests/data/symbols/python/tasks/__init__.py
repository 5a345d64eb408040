"""A small task tracker: models, storage and a command line."""

from tasks.models import Priority, Task
from tasks.storage import Store

VERSION = "1.4.0"
