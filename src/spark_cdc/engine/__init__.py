"""The warm local engine: a Spark Connect (or Thrift) server per home, its supervisor and
warm-up."""
