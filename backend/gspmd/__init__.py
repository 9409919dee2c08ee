"""The same program under XLA's GSPMD propagation, for comparison with Shardy."""
