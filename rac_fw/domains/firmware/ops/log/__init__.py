"""Console logging of a label and the latest values of named operations."""
