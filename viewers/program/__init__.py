"""The program as text: the outline of scopes and tensors, and the source view."""
