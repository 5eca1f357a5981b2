"""Operations over the client and the resource manager that are not an apply: the install lock,
access reviews, support-bundle archives, Helm's release records, what a `kubectl apply` left.

Like the manager, they know nothing of Trainer."""
