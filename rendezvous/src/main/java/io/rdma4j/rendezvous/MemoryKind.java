package io.rdma4j.rendezvous;

/** Where a buffer's bytes live ({@code rdma4j.v1.MemoryKind}). */
public enum MemoryKind {
    HOST,
    CUDA
}
