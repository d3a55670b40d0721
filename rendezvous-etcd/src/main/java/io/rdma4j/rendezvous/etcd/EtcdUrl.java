package io.rdma4j.rendezvous.etcd;

import java.util.ArrayList;
import java.util.List;

/**
 * A parsed {@code etcd://HOST:PORT[,HOST:PORT...][/CLUSTER]}: the members to dial and the cluster name that prefixes
 * every key ({@code default} when absent), so several rdma4j clusters can share one etcd.
 *
 * @param endpoints {@code http://HOST:PORT} each
 * @param cluster name under {@code /rdma4j/}
 */
public record EtcdUrl(List<String> endpoints, String cluster) {
    /** @throws IllegalArgumentException for a malformed URL, naming the expected form */
    public static EtcdUrl parse(String url) {
        String rest = url.startsWith("etcd://") ? url.substring("etcd://".length()) : url;
        String cluster = "default";
        List<String> endpoints = new ArrayList<>();
        for (String part : rest.split(",")) {
            String p = part.strip();
            if (p.startsWith("http://")) {
                p = p.substring("http://".length());
            }
            int slash = p.indexOf('/');
            if (slash >= 0) {
                String c = p.substring(slash + 1);
                if (!c.isEmpty()) {
                    cluster = c;
                }
                p = p.substring(0, slash);
            }
            int colon = p.lastIndexOf(':');
            if (p.isEmpty()
                    || colon <= 0
                    || colon == p.length() - 1
                    || !p.substring(colon + 1).chars().allMatch(Character::isDigit)) {
                throw new IllegalArgumentException("etcd URL '" + url + "' is not valid: expected "
                        + "etcd://HOST:PORT[,HOST:PORT...][/CLUSTER] or http://HOST:PORT[,http://HOST:PORT...]");
            }
            endpoints.add("http://" + p);
        }
        if (!cluster.chars().allMatch(c -> Character.isLetterOrDigit(c) || c == '-' || c == '_' || c == '.')) {
            throw new IllegalArgumentException(
                    "etcd URL '" + url + "' names cluster '" + cluster + "': use letters, digits, '-', '_' and '.'");
        }
        return new EtcdUrl(List.copyOf(endpoints), cluster);
    }

    /** @return {@code etcd://HOST:PORT,...}, for messages */
    @Override
    public String toString() {
        return "etcd at " + String.join(",", endpoints) + " (cluster " + cluster + ")";
    }
}
