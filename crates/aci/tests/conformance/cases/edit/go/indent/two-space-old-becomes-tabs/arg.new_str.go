  if u.Email == "" {
    return errors.New("email is required")
  }
  if len(u.Email) > 254 {
    return errors.New("email is too long")
  }
