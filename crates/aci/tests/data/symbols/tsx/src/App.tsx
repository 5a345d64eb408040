import React from "react";
import { Filter, TodoList } from "./components/TodoList";

interface AppState {
  error: string | null;
}

export const APP_TITLE = "Todos";

export class ErrorBoundary extends React.Component<{ children: React.ReactNode }, AppState> {
  state: AppState = { error: null };

  static getDerivedStateFromError(error: Error): AppState {
    return { error: error.message };
  }

  render() {
    if (this.state.error) {
      return <p role="alert">{this.state.error}</p>;
    }
    return this.props.children;
  }
}

export default function App() {
  return (
    <ErrorBoundary>
      <h1>{APP_TITLE}</h1>
      <TodoList filter={Filter.Open} />
    </ErrorBoundary>
  );
}
