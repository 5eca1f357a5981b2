"""Commands registered on the trainerctl app (filled in by their issue)."""
