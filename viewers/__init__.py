"""Qt widgets and graphics items. Viewers observe models and emit intents; they never mutate models."""
