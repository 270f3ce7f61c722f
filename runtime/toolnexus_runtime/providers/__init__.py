"""One module per provider: how its responses carry tool calls, how replies go back (the round
trip), and its side of the tool loop (`Conversation`). Adding a provider adds a module here and
its methods on `Toolkit`."""
