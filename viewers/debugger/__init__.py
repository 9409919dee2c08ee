"""The debugger's docks: conflicts and their factor tables, collectives, GSPMD differences."""
