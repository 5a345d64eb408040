pub fn log() {}
