package io.rdma4j.engine;

/** Another engine, as resolved through the rendezvous. */
public interface Peer {
    /** {@return its name in the directory} */
    String name();

    /** {@return the process generation it announced (changes when it restarts)} */
    long generation();

    /**
     * Looks a published buffer of this peer up.
     *
     * @param name the name it was published under
     * @return the buffer, ready to be a target or source of transfers
     * @throws io.rdma4j.InvalidArgumentException when {@code name} breaks the naming rule
     *     ({@code [A-Za-z0-9][A-Za-z0-9._:@-]{0,62}})
     * @throws UnknownBufferException when the peer published no buffer of that name (or not for us), or the directory
     *     cannot be asked
     * @throws io.rdma4j.ClosedException when the engine that resolved this peer is closed
     */
    RemoteBuffer buffer(String name);
}
