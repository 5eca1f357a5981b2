"""Builtin transformers, one module each, with the plugin kinds they answer to: namespace,
affix (prefix/suffix), labels, annotations, images, replicas, patch, patchstrategicmerge,
patchjson6902, replacements, hashes; nameref and refvar run once at the top."""
