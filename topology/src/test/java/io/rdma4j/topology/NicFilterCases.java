package io.rdma4j.topology;

import java.util.List;

/**
 * One table of NIC filters and the devices each lets through, for every backend's selection code to be tested against
 * (the libfabric and ibverbs backends run it through their own selection functions): the filter means the same thing
 * everywhere. Devices are used on port 1.
 */
public final class NicFilterCases {
    /** The devices every case filters. */
    public static final List<String> DEVICES = List.of("mlx5_0", "mlx5_1", "mlx5_10", "rxe0");

    /**
     * @param filter the filter as a user writes it ({@code null}: none)
     * @param kept the devices of {@link #DEVICES} it lets through, in order
     */
    public record Case(String filter, List<String> kept) {}

    public static final List<Case> CASES = List.of(
            new Case(null, DEVICES),
            new Case("", DEVICES),
            new Case("mlx5", List.of("mlx5_0", "mlx5_1", "mlx5_10")),
            new Case("mlx5_1", List.of("mlx5_1", "mlx5_10")),
            new Case("=mlx5_1", List.of("mlx5_1")),
            new Case("=mlx5_0,rxe0", List.of("mlx5_0", "rxe0")),
            new Case("^mlx5_1", List.of("mlx5_0", "rxe0")),
            new Case("^=mlx5_1", List.of("mlx5_0", "mlx5_10", "rxe0")),
            new Case("mlx5_0:1,rxe", List.of("mlx5_0", "rxe0")),
            new Case("^=mlx5_0:1", List.of("mlx5_1", "mlx5_10", "rxe0")),
            new Case(" mlx5_0 , rxe0 ", List.of("mlx5_0", "rxe0")),
            new Case("ib", List.of()));

    private NicFilterCases() {}
}
