"""A package as users lay one out: helpers beside the training module, a config file read from the
package's own folder, launched with `python -m trainpkg.train` from the folder above it."""
