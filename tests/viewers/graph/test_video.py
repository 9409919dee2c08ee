"""MP4 frames encoded with PyAV: sizes made even, the final hold, and the missing-PyAV error."""

import io

import pytest
from PySide6.QtGui import QColor, QImage

from shardscope.viewers.graph.video import MISSING, Mp4Encoder, have_av


def _image(width, height, color):
    image = QImage(width, height, QImage.Format.Format_ARGB32)
    image.fill(QColor(color))
    return image


def test_frames_and_the_hold_decode_as_h264(qapp):
    av = pytest.importorskip("av")
    encoder = Mp4Encoder(5.0, 2000)
    # odd sides, and a later frame of another size: all come out the first's, made even
    encoder.add(_image(301, 201, "red"))
    encoder.add(_image(301, 201, "blue"))
    encoder.add(_image(280, 230, "green"))
    data = encoder.encode()
    with av.open(io.BytesIO(data)) as container:
        stream = container.streams.video[0]
        assert stream.codec_context.name == "h264"
        decoded = [f.to_ndarray(format="rgb24") for f in container.decode(video=0)]
    # 3 frames, then the last held 2 s at 5 fps: 10 frames of it in all
    assert len(decoded) == 3 + 9 == encoder.frames
    assert all(f.shape == (202, 302, 3) for f in decoded)
    red, blue, green = (decoded[i][100, 100] for i in range(3))
    assert red[0] > 200 and red[2] < 60 and blue[2] > 200 and green[1] > 100 > green[0]
    assert (decoded[-1][100, 100] == decoded[2][100, 100]).all()


def test_discard_writes_nothing_and_closes(qapp):
    pytest.importorskip("av")
    encoder = Mp4Encoder(5.0, 0)
    encoder.add(_image(64, 64, "red"))
    encoder.discard()
    assert encoder.buffer.getvalue() == b""


def test_without_pyav_the_error_names_the_extra(qapp, monkeypatch):
    import builtins

    real_import = builtins.__import__

    def no_av(name, *args, **kwargs):
        if name == "av" or name.startswith("av."):
            raise ImportError("No module named 'av'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_av)
    assert not have_av()
    with pytest.raises(ValueError) as info:
        Mp4Encoder(5.0, 2000)
    assert str(info.value) == MISSING and "shardscope[video]" in MISSING
