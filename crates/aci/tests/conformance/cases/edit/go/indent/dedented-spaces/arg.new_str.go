if u.Name == "" {
    return errors.New("user name is required")
}
