"""Builtin generators: one module each (configmap, secret, iampolicy); kv holds what the
ConfigMap and Secret generators share."""
