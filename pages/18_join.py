"""Join the class: a student answers the question the lecturer has open (Ask the class)."""

from ui import ask
from ui.shell import shell

ctx = shell("join")
ask.join(ctx)
