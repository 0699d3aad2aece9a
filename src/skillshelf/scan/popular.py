"""Popular package names on PyPI and npm, the names typosquatters imitate one edit away (`reqeusts`, `crossenv`),
with the legitimate packages that happen to sit one edit from another (`scapy` and `scipy`, `pyaml` and `pyyaml`)
so they are not taken for squats. A short list on purpose: squats aim at the packages everyone installs."""

from __future__ import annotations

__all__ = ('POPULAR_NPM', 'POPULAR_PYPI')

POPULAR_PYPI = frozenset(
    """
    requests urllib3 numpy pandas boto3 botocore setuptools certifi charset-normalizer idna typing-extensions
    python-dateutil packaging s3transfer aiobotocore pyyaml pyaml six cryptography grpcio pip wheel fsspec s3fs attrs
    pydantic pydantic-core protobuf cffi pycparser jmespath platformdirs importlib-metadata zipp rsa pyasn1
    google-api-core markupsafe jinja2 jinja click pytz filelock colorama tomli tomlkit wrapt pluggy pytest pytest-cov
    pytest-mock pytest-asyncio virtualenv psutil sqlalchemy requests-oauthlib oauthlib werkzeug flask django
    fastapi uvicorn starlette httpx httpcore anyio sniffio aiohttp multidict frozenlist aiosignal async-timeout
    scipy scapy matplotlib pillow scikit-learn sklearn tqdm openpyxl lxml beautifulsoup4 bs4 soupsieve selenium
    playwright openai anthropic tiktoken transformers torch torchx torchvision torchaudio tensorflow keras langchain
    langchain-core langchain-openai langchain-community langchain-anthropic langgraph tokenizers huggingface-hub
    safetensors regex rich typer pygments docutils markdown pyjwt paramiko bcrypt pynacl gunicorn redis pymongo
    psycopg2 psycopg2-binary psycopg pymysql mysqlclient boto awscli google-cloud-storage azure-core
    azure-storage-blob networkx sympy simpy seaborn plotly dash dask streamlit gradio jupyter notebook ipython
    ipykernel black ruff mypy flake8 pylint isort pre-commit coverage nltk spacy gensim opencv-python
    opencv-python-headless imageio scikit-image xlrd xlwt xlsxwriter python-docx python-pptx pypdf pypdf2 pdfplumber
    reportlab pymupdf markdownify html2text feedparser schedule apscheduler celery kombu websockets
    websocket-client simplejson ujson orjson python-dotenv loguru structlog sentry-sdk docker kubernetes ansible
    fabric invoke pexpect pyperclip pyautogui keyboard pynput discord discord-py python-telegram-bot slack-sdk
    tweepy stripe twilio sendgrid pyodbc duckdb polars pyarrow numba cython joblib xgboost lightgbm catboost
    statsmodels arrow pendulum dateparser faker hypothesis responses freezegun ffmpeg-python yt-dlp youtube-dl
    pydub moviepy fastmcp pydantic-ai crewai llama-index chromadb faiss-cpu pinecone-client sentence-transformers
    google-generativeai google-genai cohere mistralai ollama litellm instructor tenacity backoff cachetools
    diskcache pycryptodome pyopenssl colorlog termcolor tabulate prettytable pyfiglet emoji unidecode chardet
    python-magic watchdog pywin32 pyinstaller setuptools-scm poetry pipenv hatchling twine build cookiecutter
    markitdown pdf2image pytesseract easyocr qrcode python-multipart jsonschema toml pyproject-hooks graphviz
    pydot folium geopandas shapely rasterio xarray netcdf4 h5py tables biopython rdkit pubchempy mdanalysis
    scanpy anndata pysam pymc arviz prophet tensorboard wandb mlflow optuna onnx onnxruntime accelerate datasets
    peft trl vllm diffusers einops timm jax flax keyring docker-compose ipywidgets nbformat nbconvert pandoc
    pypandoc weasyprint cairosvg svglib pikepdf camelot-py tabula-py ocrmypdf pyzmq tornado httplib2 google-auth
    gspread pydrive notion-client atlassian-python-api jira pygithub gitpython python-gitlab boto3-stubs
    """.split()
)
"""About 300 of PyPI's most downloaded and most used-in-skills names, PEP 503 normalised."""

POPULAR_NPM = frozenset(
    """
    react react-dom lodash express axios chalk commander debug typescript webpack eslint prettier jest mocha moment
    dayjs uuid dotenv cors body-parser mongoose mongodb redis ioredis socket.io next nuxt vue svelte jquery
    underscore async bluebird request node-fetch cross-env rimraf mkdirp glob minimist yargs inquirer semver zod
    prisma sequelize typeorm mysql mysql2 sqlite3 better-sqlite3 tailwindcss postcss autoprefixer sass vite rollup
    esbuild parcel nodemon puppeteer playwright cheerio jsdom marked markdown-it handlebars nodemailer
    jsonwebtoken bcrypt bcryptjs passport helmet morgan winston concurrently husky lint-staged ts-node vitest
    openai langchain pptxgenjs docx xlsx exceljs pdfkit sharp canvas three chart.js recharts framer-motion
    styled-components classnames clsx immer redux zustand graphql firebase aws-sdk stripe twilio discord.js
    telegraf electron react-native expo webpack-cli babel-loader css-loader style-loader ts-loader nanoid colors
    color event-stream ua-parser-js node-ipc coffee-script html-webpack-plugin serve http-server live-server
    pdf-lib mammoth turndown showdown highlight.js prismjs katex mermaid d3 lucide-react shadcn playwright-core
    chromium vercel netlify-cli wrangler firebase-tools supabase pnpm yarn npm npx bun tsx eslint-config-next
    react-router react-router-dom @anthropic-ai/sdk @modelcontextprotocol/sdk @playwright/test @babel/core
    @types/node @types/react @vercel/og @prisma/client @supabase/supabase-js @google/genai ai aws-cdk aws-cdk-lib
    cdk constructs
    """.split()
)
"""About 200 of npm's most depended-on names, and the ones skills install most."""
