"""Each transform's summary and example (its output as it runs on ``cpu``; the docstring tests run it)."""

ROWS: dict[str, tuple[str, str]] = {
    'fft': ('The one-dimensional discrete Fourier transform along ``axis``.',
         '>>> x = xp.asarray([1.0, 2.0, 0.0, -1.0], device="cpu")\n>>> xp.fft.fft(x)\nArray([2.+0.j, 1.-3.j, 0.+0.j, 1.+3.j], dtype=complex128, device=cpu)'),
    'ifft': ('The inverse of ``fft``: the one-dimensional inverse discrete Fourier transform.',
         '>>> x = xp.asarray([1.0, 2.0, 0.0, -1.0], device="cpu")\n>>> xp.fft.ifft(xp.fft.fft(x))\nArray([ 1.+0.j,  2.+0.j,  0.+0.j, -1.+0.j], dtype=complex128, device=cpu)'),
    'fftn': ('The n-dimensional discrete Fourier transform over ``axes``.',
         '>>> x = xp.asarray([[1.0, 2.0], [0.0, -1.0]], device="cpu")\n>>> xp.fft.fftn(x)\nArray([[ 2.+0.j,  0.+0.j],\n       [ 4.+0.j, -2.+0.j]], dtype=complex128, device=cpu)'),
    'ifftn': ('The inverse of ``fftn``.',
         '>>> x = xp.asarray([[1.0, 2.0], [0.0, -1.0]], device="cpu")\n>>> xp.fft.ifftn(xp.fft.fftn(x))\nArray([[ 1.+0.j,  2.+0.j],\n       [ 0.+0.j, -1.+0.j]], dtype=complex128, device=cpu)'),
    'rfft': ('The discrete Fourier transform of real input: the ``n // 2 + 1`` non-negative frequencies.',
         '>>> x = xp.asarray([1.0, 2.0, 0.0, -1.0], device="cpu")\n>>> xp.fft.rfft(x)\nArray([2.+0.j, 1.-3.j, 0.+0.j], dtype=complex128, device=cpu)'),
    'irfft': ('The inverse of ``rfft``: real output of ``n`` points (default ``2 * (m - 1)``) from Hermitian input.',
         '>>> x = xp.asarray([1.0, 2.0, 0.0, -1.0], device="cpu")\n>>> xp.fft.irfft(xp.fft.rfft(x), n=4)\nArray([ 1.,  2.,  0., -1.], dtype=float64, device=cpu)'),
    'rfftn': ('The n-dimensional transform of real input; the last axis keeps its non-negative frequencies.',
         '>>> x = xp.asarray([[1.0, 2.0], [0.0, -1.0]], device="cpu")\n>>> xp.fft.rfftn(x)\nArray([[ 2.+0.j,  0.+0.j],\n       [ 4.+0.j, -2.+0.j]], dtype=complex128, device=cpu)'),
    'irfftn': ('The inverse of ``rfftn``: real output.',
         '>>> x = xp.asarray([[1.0, 2.0], [0.0, -1.0]], device="cpu")\n>>> xp.fft.irfftn(xp.fft.rfftn(x), s=(2, 2), axes=(0, 1))\nArray([[ 1.,  2.],\n       [ 0., -1.]], dtype=float64, device=cpu)'),
    'hfft': ('The transform of a Hermitian-symmetric signal given by its non-negative half: real output.',
         '>>> x = xp.asarray([1.0, 2.0, 0.0, -1.0], device="cpu")\n>>> xp.fft.hfft(xp.astype(x, xp.complex128), n=6)\nArray([ 4.,  4., -2., -2., -2.,  4.], dtype=float64, device=cpu)'),
    'ihfft': ('The inverse of ``hfft``: the non-negative half of the transform of a real signal.',
         '>>> x = xp.asarray([1.0, 2.0, 0.0, -1.0], device="cpu")\n>>> xp.fft.ihfft(x)\nArray([0.5 -0.j  , 0.25+0.75j, 0.  -0.j  ], dtype=complex128, device=cpu)'),
}
