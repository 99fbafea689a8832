"""rac-fw: a relational agent contract for embedded firmware and sibling domains."""
