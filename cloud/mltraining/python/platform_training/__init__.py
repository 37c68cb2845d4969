"""Built-in PyTorch training for the platform's ML training service (run as a child process)."""
