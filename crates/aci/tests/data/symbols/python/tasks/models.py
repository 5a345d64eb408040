"""Task models."""

from dataclasses import dataclass, field
from enum import Enum
import functools

MAX_TITLE = 80
DEFAULT_TAGS = ("inbox",)


class Priority(Enum):
    LOW = 1
    NORMAL = 2
    HIGH = 3

    @classmethod
    def parse(cls, text):
        """Parse a priority name such as 'high'."""
        return cls[text.strip().upper()]


@dataclass
class Task:
    """One task. A Task with done=True is hidden by default."""

    WIDTH = 40

    title: str
    priority: Priority = Priority.NORMAL
    tags: list = field(default_factory=lambda: list(DEFAULT_TAGS))
    done: bool = False

    class Meta:
        table = "tasks"

        def columns(self):
            return ["title", "priority", "tags", "done"]

    @property
    def label(self):
        mark = "x" if self.done else " "
        return "[" + mark + "] " + self.title[:Task.WIDTH]

    def complete(self):
        self.done = True
        return self


@functools.lru_cache(
    maxsize=128,
)
def task(
    title,
    priority=Priority.NORMAL,
    *tags,
):
    """Build a task; the title is cut to MAX_TITLE characters."""
    if len(title) > MAX_TITLE:
        title = title[:MAX_TITLE]
    return Task(title, priority, list(tags) or list(DEFAULT_TAGS))


def sort_tasks(tasks):
    def key(t):
        return (t.done, -t.priority.value, t.title.lower())

    return sorted(tasks, key=key)
