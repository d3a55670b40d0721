package io.rdma4j.engine;

/**
 * A buffer another engine published, as resolved through the rendezvous: the keys stay inside the engine. Its methods
 * only read what was resolved and throw nothing; a transfer naming it throws (or its future fails) as
 * {@link TransferEngine#write(LocalBuffer, long, RemoteBuffer, long, long, TransferOptions)} documents.
 */
public interface RemoteBuffer {
    /** {@return the published name} */
    String name();

    /** {@return the owning peer} */
    Peer peer();

    /** {@return its length in bytes} */
    long length();

    /** {@return where its memory lives on the owner} */
    MemoryLocation location();

    /** {@return the owner's registration generation this handle refers to} */
    long generation();
}
