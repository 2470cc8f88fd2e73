"""winviz."""
