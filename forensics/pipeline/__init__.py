"""pipeline layer: work units (layout + io + codec + state for one segment) and the executors that run
them, local or on Spark (see engine.py)."""
