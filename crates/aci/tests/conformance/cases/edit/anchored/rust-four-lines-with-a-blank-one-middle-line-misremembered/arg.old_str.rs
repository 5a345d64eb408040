    let text = std::fs::read_to_string(path)?;

    let config: Config = toml::from_str(text)?;
    Ok(config)
