"""``python -m ui`` starts the desktop app."""

from ui.main import main

raise SystemExit(main())
