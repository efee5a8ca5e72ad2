"""ParaView opens mesh-export's XDMF sidecars headless (run by run_client.sh) and sees the
cache itself: the right number of time steps at the cache's times, the right number of points,
the cloth's positions (1e-6 m), the water grid's size, and particles without faces as one vertex
cell each at every time step (ParaView draws no point that is in no cell).

Usage: pvpython paraview_check.py ./cloth.xmf ./water.xmf FRAMES ./drops.xmf
Any failed check raises, and pvpython exits non-zero.
"""
import math
import sys

from paraview import servermanager
from paraview.simple import Xdmf3ReaderS

cloth_xmf, water_xmf, frames, drops_xmf = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
NX, NZ = 5, 4  # tests/support/export_caches.hpp


def cloth_position(i, f):
    x, z = 0.1 * (i % NX), 0.1 * (i // NX)
    t = (f - 1) / 24.0
    return (x, 0.05 * math.sin(3.0 * x + 2.0 * t) + 0.01 * f, z)


def first_block(data):
    """The dataset itself, or the first leaf of a multiblock."""
    while data.IsA("vtkMultiBlockDataSet"):
        data = data.GetBlock(0)
    return data


def open_xdmf(path):
    reader = Xdmf3ReaderS(FileName=[path])
    reader.UpdatePipelineInformation()
    times = list(reader.TimestepValues)
    assert len(times) == frames, f"{path}: {len(times)} time steps, expected {frames}"
    for f, t in enumerate(times, start=1):
        assert abs(t - (f - 1) / 24.0) < 1e-9, f"{path}: time step {f} at {t} s"
    return reader, times


cloth, times = open_xdmf(cloth_xmf)
for f in (1, frames):
    cloth.UpdatePipeline(times[f - 1])
    data = first_block(servermanager.Fetch(cloth))
    n = data.GetNumberOfPoints()
    assert n == NX * NZ, f"{cloth_xmf}: frame {f}: {n} points, expected {NX * NZ}"
    assert data.GetNumberOfCells() == 2 * (NX - 1) * (NZ - 1), f"{cloth_xmf}: cells"
    worst = max(abs(a - b) for i in range(n)
                for a, b in zip(data.GetPoint(i), cloth_position(i, f)))
    assert worst <= 1e-6, f"{cloth_xmf}: frame {f}: positions off by {worst} m"
    stiffness = data.GetPointData().GetArray("stiffness")
    assert stiffness is not None and stiffness.GetValue(3) == 130.0, "stiffness attribute"
    print(f"{cloth_xmf}: frame {f}: {n} points, positions match (max error {worst:.1e} m)")

water, times = open_xdmf(water_xmf)
water.UpdatePipeline(times[-1])
grid = first_block(servermanager.Fetch(water))
assert grid.GetNumberOfPoints() == 24 ** 3, f"{water_xmf}: {grid.GetNumberOfPoints()} points"
assert grid.GetPointData().GetArray("surface") is not None, "no surface array"
print(f"{water_xmf}: {len(times)} time steps of {grid.GetNumberOfPoints()} points")
drops, times = open_xdmf(drops_xmf)
for t in (times[0], times[-1]):
    drops.UpdatePipeline(t)
    data = first_block(servermanager.Fetch(drops))
    n, cells = data.GetNumberOfPoints(), data.GetNumberOfCells()
    assert n == 6 ** 3, f"{drops_xmf}: {n} points"
    assert cells == n, f"{drops_xmf}: at {t} s {cells} cells for {n} particles"
print(f"{drops_xmf}: {n} particles, one vertex cell each, first and last time step")
print("paraview: all checks passed")
