"""What every view shares: colours, drag-and-drop payloads, the messages view."""
