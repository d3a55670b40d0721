package io.rdma4j.engine;

/** A buffer another engine published, as resolved through the rendezvous: the keys stay inside the engine. */
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
