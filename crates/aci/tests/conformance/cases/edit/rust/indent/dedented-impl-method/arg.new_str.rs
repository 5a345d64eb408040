fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    write!(f, "{}", self.address())?;
    write!(f, " (retries: {})", self.retries)
}
