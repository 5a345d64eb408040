  if u.Email == "" {
    return errors.New("email is required")
  }
