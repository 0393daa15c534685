//! The gRPC API of the cluster (filled in by the cluster issue).
