// Domain types for the user directory.

export const MAX_NAME_LENGTH = 64;

export enum Status {
  Active = "active",
  Suspended = "suspended",
}

export type UserId = string;

export type Filter<T> = (item: T) => boolean;

export interface Entity {
  id: UserId;
}

export interface User extends Entity {
  name: string;
  email: string;
  status: Status;
}

/** A store of entities; "Store" in this comment is not a reference. */
export interface Store<T extends Entity> {
  get(id: UserId): T | undefined;
  put(item: T): void;
  findAll(
    filter?: Filter<T>,
  ): T[];
  onChange?: (item: T) => void;
}

export namespace Validation {
  const emailPattern = /^[^@\s]+@[^@\s]+$/;

  export function validate(user: User): string[] {
    const errors: string[] = [];
    if (user.name.length > MAX_NAME_LENGTH) {
      errors.push("name too long");
    }
    if (!isEmail(user.email)) {
      errors.push("bad email");
    }
    return errors;
  }

  export function isEmail(text: string): boolean {
    return emailPattern.test(text);
  }
}

module Legacy {
  export function toUser(row: string[]): User {
    return { id: row[0], name: row[1], email: row[2], status: Status.Active };
  }
}

export function status(user: User): string {
  return user.status === Status.Active ? "ok" : "blocked";
}
