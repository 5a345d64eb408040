import React from "react";

export type ButtonKind = "primary" | "secondary";

export interface ButtonProps {
  kind?: ButtonKind;
  disabled?: boolean;
  onClick(): void;
  children: React.ReactNode;
}

export const BUTTON_CLASS = "btn";

export const label = (kind: ButtonKind) => kind.charAt(0).toUpperCase() + kind.slice(1);

/** A plain button; the word Button in this comment is not a reference. */
export function Button({ kind = "primary", disabled, onClick, children }: ButtonProps) {
  return (
    <button
      className={BUTTON_CLASS + " " + BUTTON_CLASS + "-" + kind}
      disabled={disabled}
      aria-label={label(kind)}
      onClick={onClick}
    >
      {children}
    </button>
  );
}

export const IconButton = ({ icon, ...rest }: ButtonProps & { icon: string }) => (
  <Button {...rest}>
    <span className="icon">{icon}</span>
  </Button>
);

export const List = <T,>({ items, render }: { items: T[]; render: (item: T) => React.ReactNode }) => (
  <ul>{items.map((item, i) => <li key={i}>{render(item)}</li>)}</ul>
);
