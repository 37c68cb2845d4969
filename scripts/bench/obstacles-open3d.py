# The anchor of bench:obstacles: Open3D's segment_plane + cluster_dbscan on the same clouds.
# Usage: python3 obstacles-open3d.py REPEATS FILE...   Prints one JSON object: {file: median seconds}.
import json
import statistics
import sys
import time

import open3d as o3d

repeats = int(sys.argv[1])
out = {}
for path in sys.argv[2:]:
    cloud = o3d.io.read_point_cloud(path, remove_nan_points=True, remove_infinite_points=True)
    times = []
    cpu = []
    for _ in range(repeats):
        start = time.perf_counter()
        start_cpu = time.process_time()
        # 2 cm plane band and 2 cm DBSCAN radius (metres), 10 points per cluster: the usual settings
        # for Kinect-class clouds.
        plane, inliers = cloud.segment_plane(distance_threshold=0.02, ransac_n=3, num_iterations=1000)
        rest = cloud.select_by_index(inliers, invert=True)
        labels = rest.cluster_dbscan(eps=0.02, min_points=10)
        times.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    out[path] = {"seconds": statistics.median(times), "cpu_seconds": statistics.median(cpu), "points": len(cloud.points), "clusters": int(max(labels) + 1) if len(labels) else 0}
print(json.dumps(out))
