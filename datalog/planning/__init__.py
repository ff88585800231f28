"""Planning: a rule's variable order, its plan as data, and the backend that maintains it."""
