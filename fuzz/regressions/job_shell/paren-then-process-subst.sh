f (<(hostname) x
