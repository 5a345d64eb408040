import React, { useState } from "react";
import { Button, IconButton, List } from "./Button";

export enum Filter {
  All,
  Open,
  Done,
}

export interface Todo {
  id: number;
  title: string;
  done: boolean;
}

export function useTodos(initial: Todo[] = []) {
  const [todos, setTodos] = useState<Todo[]>(initial);

  const add = (title: string) =>
    setTodos((list) => [...list, { id: list.length + 1, title, done: false }]);

  const toggle = function (id: number) {
    setTodos((list) => list.map((t) => (t.id === id ? { ...t, done: !t.done } : t)));
  };

  return { todos, add, toggle };
}

export function filterTodos(todos: Todo[], filter: Filter): Todo[] {
  switch (filter) {
    case Filter.Open:
      return todos.filter((t) => !t.done);
    case Filter.Done:
      return todos.filter((t) => t.done);
    default:
      return todos;
  }
}

export function label(todo: Todo): string {
  return todo.done ? todo.title + " (done)" : todo.title;
}

export function TodoList({ filter = Filter.All }: { filter?: Filter }) {
  const { todos, add, toggle } = useTodos();
  const visible = filterTodos(todos, filter);
  return (
    <section>
      <List
        items={visible}
        render={(t: Todo) => (
          <label>
            <input type="checkbox" checked={t.done} onChange={() => toggle(t.id)} />
            {label(t)}
          </label>
        )}
      />
      <Button onClick={() => add("New todo")}>Add</Button>
      <IconButton icon="x" onClick={() => add("")}>
        Clear
      </IconButton>
    </section>
  );
}
