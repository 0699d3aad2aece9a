"""Import names whose distribution has another name: `import PIL` is installed as `pillow`.

Only well-known, stable mismatches are listed; for an installed module the environment's own
`importlib.metadata.packages_distributions()` answers instead. A name not listed is not guessed at: `pip install`
under the import name is often right, but not always, and a wrong hint costs more than none.
"""

from __future__ import annotations

__all__ = ('DISTRIBUTIONS', 'distribution_of', 'install_hint')

DISTRIBUTIONS = {
    'PIL': 'pillow',
    'yaml': 'PyYAML',
    'docx': 'python-docx',
    'pptx': 'python-pptx',
    'cv2': 'opencv-python',
    'fitz': 'pymupdf',
    'bs4': 'beautifulsoup4',
    'sklearn': 'scikit-learn',
    'skimage': 'scikit-image',
    'dateutil': 'python-dateutil',
    'dotenv': 'python-dotenv',
    'magic': 'python-magic',
    'jwt': 'PyJWT',
    'serial': 'pyserial',
    'Crypto': 'pycryptodome',
    'OpenSSL': 'pyOpenSSL',
    'attr': 'attrs',
    'gi': 'PyGObject',
    'zmq': 'pyzmq',
    'usb': 'pyusb',
    'pdfminer': 'pdfminer.six',
    'Levenshtein': 'levenshtein',
    'github': 'PyGithub',
    'git': 'GitPython',
    'googleapiclient': 'google-api-python-client',
    'win32api': 'pywin32',
    'win32com': 'pywin32',
    'pythoncom': 'pywin32',
    'mpl_toolkits': 'matplotlib',
    'pkg_resources': 'setuptools',
    'distutils': 'setuptools',
}
"""Import name → the distribution that provides it, where they differ (or, for `distutils`, where it went when it
left the standard library)."""


def distribution_of(module: str) -> str | None:
    """The distribution that provides the top-level module `module`, when it is a known mismatch."""
    return DISTRIBUTIONS.get(module.split('.', 1)[0])


def install_hint(module: str) -> str | None:
    """`pip install <distribution>` for a module whose distribution has another name, else `None`."""
    distribution = distribution_of(module)
    return f'pip install {distribution}' if distribution is not None else None
