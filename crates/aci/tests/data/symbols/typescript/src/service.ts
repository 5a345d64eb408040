import { InMemoryRepo } from "./repo";
import { Status, User, UserId, Validation, status } from "./models";

export const DEFAULT_PAGE_SIZE = 20;

export type Page<T> = { items: T[]; total: number };

export const paginate = <T>(items: T[], page: number, size = DEFAULT_PAGE_SIZE): Page<T> => ({
  items: items.slice(page * size, (page + 1) * size),
  total: items.length,
});

export class UserService {
  private repo = new InMemoryRepo<User>();

  register(id: UserId, name: string, email: string): User {
    const user: User = { id, name, email, status: Status.Active };
    this.validate(user);
    this.repo.put(user);
    return user;
  }

  validate(user: User): void {
    const errors = Validation.validate(user);
    if (errors.length > 0) {
      throw new Error(errors.join(", "));
    }
  }

  suspend(id: UserId): string {
    const user = this.repo.findById(id);
    if (!user) {
      return "missing";
    }
    user.status = Status.Suspended;
    return status(user);
  }

  active(page = 0): Page<User> {
    const users = this.repo.findAll((u) => u.status === Status.Active);
    return paginate(users, page);
  }
}
