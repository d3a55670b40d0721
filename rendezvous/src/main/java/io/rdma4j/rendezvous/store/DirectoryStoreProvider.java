package io.rdma4j.rendezvous.store;

/**
 * Opens a {@link DirectoryStore} named by a URL such as {@code etcd://10.0.0.1:2379,10.0.0.2:2379/cluster}. Found with
 * {@link java.util.ServiceLoader}: put the store's module (e.g. {@code rdma4j-rendezvous-etcd}) on the class path.
 */
public interface DirectoryStoreProvider {
    /** @return whether this provider opens {@code url} */
    boolean accepts(String url);

    /** @throws IllegalArgumentException for a malformed URL, naming the expected form */
    DirectoryStore open(String url);
}
