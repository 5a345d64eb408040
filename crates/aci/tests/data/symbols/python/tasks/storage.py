"""Reading and writing tasks as lines of text."""

import os

from tasks.models import Priority, Task, task

SEPARATOR = "|"


def parse(line):
    """Split one stored line; parse is the low-level step of parse_config too."""
    return [part.strip() for part in line.split(SEPARATOR)]


def parse_config(text):
    config = {}
    for line in text.splitlines():
        if "=" in line:
            key, value = line.split("=", 1)
            config[key.strip()] = value.strip()
    return config


class Store:
    """Tasks kept in a file, one per line."""

    def __init__(self, path):
        self.path = path
        self.tasks = []

    def load(self):
        if not os.path.exists(self.path):
            return self
        with open(self.path) as fh:
            for line in fh:
                title, priority, done = parse(line)
                item = task(title, Priority.parse(priority))
                if done == "1":
                    item.complete()
                self.tasks.append(item)
        return self

    def save(self):
        with open(self.path, "w") as fh:
            for item in self.tasks:
                fh.write(self.format_line(item) + "\n")

    @staticmethod
    def format_line(item: Task) -> str:
        done = "1" if item.done else "0"
        return SEPARATOR.join([item.title, item.priority.name, done])


def load(path):
    return Store(path).load()
